package io.partita.bench;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import java.time.Duration;
import java.util.Map;

/** The limit: the same model called in-process through ONNX Runtime, no Kafka, no HTTP. */
final class EngineBench {
  private EngineBench() {}

  static LoadRunner.Result run(BenchModel model, int threads, int concurrency, int batch, Duration warmup, Duration measured)
      throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
      options.setIntraOpNumThreads(threads);
      options.setInterOpNumThreads(1);
      options.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR);
      try (OrtSession session = env.createSession(model.file().toString(), options)) {
        String input = model.input().name();
        OnnxTensor[] inputs = new OnnxTensor[concurrency];
        try {
          for (int i = 0; i < concurrency; i++) {
            inputs[i] = model.ortInput(env, batch, i);
          }
          return LoadRunner.run(concurrency, warmup, measured, batch, i -> () -> {
            try (OrtSession.Result r = session.run(Map.of(input, inputs[i]))) {
              r.get(0);
            }
          });
        } finally {
          for (OnnxTensor t : inputs) {
            if (t != null) {
              t.close();
            }
          }
        }
      }
    }
  }
}
