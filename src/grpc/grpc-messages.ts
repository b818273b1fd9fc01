// The message shapes of grpc_service.proto as proto-loader hands them over (PROTO_LOADER_OPTIONS):
// only the fields Herd reads or writes. int64/uint64 fields are decimal strings when decoded.

export interface InferParameterMessage {
  bool_param?: boolean;
  int64_param?: string | number;
  string_param?: string;
  double_param?: number;
  uint64_param?: string | number;
  parameter_choice?: 'bool_param' | 'int64_param' | 'string_param' | 'double_param' | 'uint64_param';
}

export type ParameterMap = Record<string, InferParameterMessage>;

export interface InferTensorContentsMessage {
  bool_contents: boolean[];
  int_contents: number[];
  int64_contents: string[];
  uint_contents: number[];
  uint64_contents: string[];
  fp32_contents: number[];
  fp64_contents: number[];
  bytes_contents: Buffer[];
}

export interface InferInputTensorMessage {
  name: string;
  datatype: string;
  shape: (string | number)[];
  parameters: ParameterMap;
  contents: InferTensorContentsMessage | null;
}

export interface InferRequestedOutputMessage {
  name: string;
  parameters: ParameterMap;
}

export interface ModelInferRequestMessage {
  model_name: string;
  model_version: string;
  id: string;
  parameters: ParameterMap;
  inputs: InferInputTensorMessage[];
  outputs: InferRequestedOutputMessage[];
  raw_input_contents: Buffer[];
}

export interface InferOutputTensorMessage {
  name: string;
  datatype: string;
  shape: (number | string)[];
  parameters?: ParameterMap;
}

export interface ModelInferResponseMessage {
  model_name: string;
  model_version: string;
  id: string;
  parameters: ParameterMap;
  outputs: InferOutputTensorMessage[];
  raw_output_contents: Uint8Array[];
}

export interface ModelStreamInferResponseMessage {
  error_message: string;
  infer_response: ModelInferResponseMessage | null;
}
