/** One API key record, opened for a call: where to send the request and with which key. */
export interface UpstreamTarget {
  recordId: number;
  /** Base URL; the OpenAI client adds `/v1`. */
  address: string;
  apiKey: string;
}
