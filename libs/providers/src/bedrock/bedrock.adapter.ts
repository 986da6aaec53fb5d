import type { ChatAdapter, ChatRequestInput, OutboundRequest } from '../adapter.js';
import { BedrockStreamTranslator, bedrockAnswer, bedrockError } from './bedrock-answer.js';
import { awsCredentials, regionOf, signatureHeaders } from './bedrock-credentials.js';
import { toConverseRequest } from './bedrock-request.js';

// Amazon Bedrock's Converse API
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html): the
// channel's base URL is the runtime endpoint, `https://bedrock-runtime.{region}.amazonaws.com`,
// and every request is signed for the channel's region (docs/providers.md).

/** A request to Bedrock, signed with the channel's key pair when it is sent. */
export function signedRequest(
  path: string,
  body: Buffer,
  { secret, settings }: Pick<ChatRequestInput, 'secret' | 'settings'>,
  headers: Record<string, string> = {},
): OutboundRequest {
  return {
    path,
    headers,
    body,
    sign: (url) =>
      signatureHeaders(
        { method: 'POST', url, body },
        awsCredentials(secret),
        regionOf(settings.region, url.hostname),
      ),
  };
}

export const bedrockAdapter: ChatAdapter = {
  chatRequest(input, stream) {
    // Model ids hold colons and inference-profile ARNs slashes: one path segment either way.
    const model = encodeURIComponent(input.upstreamModel);
    return signedRequest(
      `/model/${model}/${stream ? 'converse-stream' : 'converse'}`,
      Buffer.from(JSON.stringify(toConverseRequest(input.body))),
      input,
      stream ? { accept: 'application/vnd.amazon.eventstream' } : {},
    );
  },
  chatAnswer: bedrockAnswer,
  chatStream: (context) => new BedrockStreamTranslator(context),
  error: bedrockError,
  // ModelErrorException (424): the model failed on a valid request; another channel may not.
  healthStatus: (status) => (status === 424 ? 502 : status),
};
