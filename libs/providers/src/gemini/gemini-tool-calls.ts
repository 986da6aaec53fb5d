// Gemini's thinking models sign their function calls (`thoughtSignature`) and refuse a
// conversation whose earlier calls come back unsigned. OpenAI's tool calls have no place
// for it but their id, which every client returns as it got it: the signature travels
// there, after a mark that base64 never contains.

const SIGNATURE_MARK = ':sig:';

export function toolCallId(id: string, signature: string | undefined): string {
  return signature ? `${id}${SIGNATURE_MARK}${signature}` : id;
}

export function splitToolCallId(id: string | undefined): { signature: string | null } {
  const at = id?.indexOf(SIGNATURE_MARK) ?? -1;
  return { signature: at >= 0 ? id!.slice(at + SIGNATURE_MARK.length) : null };
}
