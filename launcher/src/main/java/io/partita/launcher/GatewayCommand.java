package io.partita.launcher;

import io.partita.common.config.Settings;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "gateway", mixinStandardHelpOptions = true,
    description = "Run the gateway (Open Inference Protocol v2 over HTTP and gRPC) against an existing Kafka cluster.")
final class GatewayCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Option(names = "--model-repo", paramLabel = "DIR", description = "Offer this model repository's service models (scanned at start). Without it the gateway offers what the catalog topics hold and follows them: no model files, no ONNX Runtime.")
  Path modelRepo;

  @Option(names = "--http-port", description = "HTTP port (default: 8080).")
  Integer httpPort;

  @Option(names = "--grpc-port", description = "gRPC port, OIP v2 GRPCInferenceService (default: 8001; 0 = any free port; -1 = off).")
  Integer grpcPort;

  @Override
  public Integer call() throws Exception {
    Map<String, String> flags = new HashMap<>();
    flags.put("model.repo", modelRepo == null ? null : modelRepo.toString());
    flags.put("http.port", httpPort == null ? null : httpPort.toString());
    flags.put("gateway.grpc-port", grpcPort == null ? null : grpcPort.toString());
    Settings settings = common.settings(Map.of(), flags);
    Services.logSettings("gateway", settings);
    Services services = new Services();
    services.start(new Gateway(GatewayConfig.from(settings)));
    return services.awaitShutdown();
  }
}
