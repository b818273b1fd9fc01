// The canonical embeddings request every ingress decodes into and every provider sends.

/** OpenAI's `encoding_format`: floats in JSON, or base64 of little-endian float32 bytes. */
export type EncodingFormat = 'float' | 'base64';

export interface EmbeddingsRequest {
  model: string;
  /** One text per vector, in the client's order. */
  inputs: string[];
  encodingFormat: EncodingFormat;
  dimensions?: number;
  user?: string;
}
