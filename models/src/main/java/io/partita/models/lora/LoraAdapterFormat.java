package io.partita.models.lora;

/**
 * Constants of ONNX Runtime's LoRA adapter file format ({@code
 * onnxruntime/lora/adapter_format/adapter_schema.fbs}), shared by the writer and the reader.
 *
 * <pre>
 * namespace onnxruntime.adapters;
 * enum TensorDataType : int32 { UNDEFINED = 0, FLOAT = 1, ..., FLOAT16 = 10, ... }
 * table Parameter { name:string; dims:[int64]; data_type:TensorDataType; raw_data:[uint8] (force_align: 8); }
 * table Adapter { format_version:int; adapter_version:int; model_version:int; parameters:[Parameter]; }
 * root_type Adapter;
 * file_identifier "TORT";
 * </pre>
 *
 * ONNX Runtime 1.29 accepts only {@code format_version} 1, verifies the buffer with the flatbuffers
 * verifier, and reads {@code raw_data} in place (little-endian), which is why it is 8-byte aligned.
 */
public final class LoraAdapterFormat {

  /** The flatbuffers file identifier, bytes 4..8 of every adapter file. */
  public static final String FILE_IDENTIFIER = "TORT";

  /** The only {@code format_version} ONNX Runtime 1.29 accepts. */
  public static final int FORMAT_VERSION = 1;

  /** {@code TensorDataType.FLOAT}. */
  public static final int DATA_TYPE_FLOAT = 1;

  /** Conventional file extension used by ONNX Runtime's tools. */
  public static final String FILE_EXTENSION = ".onnx_adapter";

  // Field slots (vtable index) in schema order.
  static final int PARAMETER_NAME = 0;
  static final int PARAMETER_DIMS = 1;
  static final int PARAMETER_DATA_TYPE = 2;
  static final int PARAMETER_RAW_DATA = 3;
  static final int PARAMETER_FIELDS = 4;

  static final int ADAPTER_FORMAT_VERSION = 0;
  static final int ADAPTER_ADAPTER_VERSION = 1;
  static final int ADAPTER_MODEL_VERSION = 2;
  static final int ADAPTER_PARAMETERS = 3;
  static final int ADAPTER_FIELDS = 4;

  private LoraAdapterFormat() {}
}
