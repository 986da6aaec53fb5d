import { Hash } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';

// A bedrock channel's key is an AWS access key pair, `ACCESS_KEY_ID:SECRET_ACCESS_KEY`, with
// `:SESSION_TOKEN` for temporary credentials; requests are signed with Signature V4
// (docs/providers.md).

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Access key ids are upper-case letters and digits; secrets and tokens are base64-like. */
const KEY_PAIR = /^([A-Z0-9]{16,128}):([A-Za-z0-9/+=]{16,128})(?::([A-Za-z0-9/+=]{16,}))?$/;

/** True when the text is a key in the bedrock key format. */
export function isAwsKeyPair(key: string): boolean {
  return KEY_PAIR.test(key);
}

/**
 * The credentials in a channel key. The admin API accepts only well-formed keys; a key that
 * is not one anyway is split as far as it goes, so AWS refuses it (403) and the router
 * disables the key, as for any refused key.
 */
export function awsCredentials(key: string): AwsCredentials {
  const [accessKeyId = '', secretAccessKey = '', ...token] = key.split(':');
  const sessionToken = token.join(':');
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

/** The signing name of Bedrock's runtime and of its control plane (the model list) alike. */
const BEDROCK_SERVICE = 'bedrock';

/** The region a channel signs for: its setting, else the one its AWS host names. */
export function regionOf(region: string | undefined, baseUrl?: string): string {
  if (region) return region;
  const named = baseUrl
    ? /bedrock(?:-runtime)?[.-]([a-z]{2}(?:-[a-z]+)+-\d)\./.exec(baseUrl)
    : null;
  return named?.[1] ?? 'us-east-1';
}

export interface SignableRequest {
  method: 'GET' | 'POST';
  url: URL;
  body?: Buffer;
}

/**
 * The Signature V4 headers (`authorization`, `x-amz-date`, `x-amz-content-sha256`,
 * `x-amz-security-token`) for one request. Only `host` and these are signed, so the headers
 * a sender adds afterwards (content type, request id) do not break the signature.
 */
export async function signatureHeaders(
  request: SignableRequest,
  credentials: AwsCredentials,
  region: string,
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: BEDROCK_SERVICE,
    region,
    credentials,
    sha256: Hash.bind(null, 'sha256'),
  });
  const { url } = request;
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { host: url.host },
    ...(request.body ? { body: request.body } : {}),
  });
  const { host: _host, ...headers } = signed.headers;
  return headers;
}
