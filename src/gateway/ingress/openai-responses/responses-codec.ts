// The OpenAI Responses dialect (POST /v1/responses) as an ingress codec: bridged onto chat, or passed
// through to an upstream's own /responses (raw: how Herd ends such a stream).
import type { IngressCodec } from '../../protocol/ingress-codec.ts';
import { decodeResponsesRequest } from './decode-responses-request.ts';
import { encodeResponsesResponse } from '../../wire/openai-responses/encode-responses-response.ts';
import { responsesRawEnd } from '../../wire/openai-responses/encode-responses-raw-end.ts';
import { createResponsesStreamEncoder } from '../../wire/openai-responses/encode-responses-stream.ts';
import type { ResponsesDecoded } from '../../wire/openai-responses/responses-types.ts';

export const responsesCodec: IngressCodec<ResponsesDecoded> = {
  dialect: 'openai-responses',
  passThrough: true,
  decode: decodeResponsesRequest,
  encodeResponse: encodeResponsesResponse,
  createStreamEncoder: createResponsesStreamEncoder,
  raw: responsesRawEnd,
};
