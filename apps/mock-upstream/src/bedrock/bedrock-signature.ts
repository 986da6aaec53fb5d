import { createHash } from 'node:crypto';
import { Hash } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';
import { type FastifyRequest } from 'fastify';
import { type AccountPool } from '../accounts/account-pool.js';

// AWS Signature V4 as AWS checks it (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html):
// the mock finds the account by the access key id in the credential scope and signs the
// request again with that account's secret; a different signature is refused as AWS does.
// An account's key is `ACCESS_KEY_ID:SECRET_ACCESS_KEY`, the bedrock channel key format.

export type SignatureCheck =
  | { ok: true; key: string }
  | {
      ok: false;
      code:
        | 'UnrecognizedClientException'
        | 'InvalidSignatureException'
        | 'MissingAuthenticationTokenException';
      message: string;
    };

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;

/** `20240101T000000Z` as a Date. */
function amzDate(value: string): Date | null {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match;
  return new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
}

/** The request's body as the client sent it; JSON bodies are what the parser gave back. */
function bodyOf(request: FastifyRequest): string {
  return request.body === undefined ? '' : JSON.stringify(request.body);
}

export async function checkSignature(
  request: FastifyRequest,
  accounts: AccountPool,
  service: string,
): Promise<SignatureCheck> {
  const header = request.headers.authorization;
  const parsed = typeof header === 'string' ? AUTHORIZATION.exec(header) : null;
  const date = amzDate(String(request.headers['x-amz-date'] ?? ''));
  if (!parsed || !date)
    return {
      ok: false,
      code: 'MissingAuthenticationTokenException',
      message: 'Missing Authentication Token',
    };
  const [, accessKeyId, , region, signedService, signedHeaders, signature] = parsed;
  const key = accounts.list().find((account) => account.key.startsWith(`${accessKeyId}:`))?.key;
  if (!key)
    return {
      ok: false,
      code: 'UnrecognizedClientException',
      message: 'The security token included in the request is invalid.',
    };
  const [, secretAccessKey = '', ...token] = key.split(':');
  const sessionToken = request.headers['x-amz-security-token'];
  const body = bodyOf(request);
  // The mock re-serialises the parsed JSON; byte for byte what a JSON.stringify client sent.
  const payloadHash = createHash('sha256').update(body).digest('hex');
  const claimedHash = request.headers['x-amz-content-sha256'];
  const headers: Record<string, string> = {};
  for (const name of signedHeaders!.split(';')) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const signer = new SignatureV4({
    service: signedService!,
    region: region!,
    credentials: {
      accessKeyId: accessKeyId!,
      secretAccessKey,
      ...(typeof sessionToken === 'string' ? { sessionToken } : {}),
    },
    sha256: Hash.bind(null, 'sha256'),
  });
  const url = new URL(request.url, 'http://mock');
  const again = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: headers.host ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
    },
    { signingDate: date, signingService: signedService, signingRegion: region },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(again.headers.authorization))?.[1];
  const tokenMatches = token.length === 0 || token.join(':') === sessionToken;
  if (
    service !== signedService ||
    expected !== signature ||
    (claimedHash !== undefined && claimedHash !== payloadHash) ||
    !tokenMatches
  )
    return {
      ok: false,
      code: 'InvalidSignatureException',
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    };
  return { ok: true, key };
}
