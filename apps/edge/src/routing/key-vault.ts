import { Injectable } from '@nestjs/common';
import { type RoutedKey } from '@switchyard/contracts';
import { registerSecret } from '@switchyard/observability';
import { SecretCipher } from '@switchyard/security';

/** Upstream keys travel sealed in snapshots; each is opened once, when first used. */
@Injectable()
export class KeyVault {
  private readonly opened = new Map<number, { sealed: string; secret: string }>();

  constructor(private readonly cipher: SecretCipher) {}

  secretOf(key: RoutedKey): string {
    const cached = this.opened.get(key.id);
    if (cached && cached.sealed === key.secretCiphertext) return cached.secret;
    const secret = this.cipher.open(key.secretCiphertext);
    // Upstreams quote keys in their errors: no log line of this process may carry one.
    registerSecret(secret);
    this.opened.set(key.id, { sealed: key.secretCiphertext, secret });
    return secret;
  }
}
