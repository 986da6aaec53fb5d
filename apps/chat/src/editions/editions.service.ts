import { randomUUID, type KeyObject } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { ApiError } from '@switchyard/contracts';
import { type License } from '@switchyard/db';
import { normalizeAddress } from '../api-keys/address.js';
import { type EditionResponse, type LicenseSummary } from './editions.dto.js';
import { EditionsRepository } from './editions.repository.js';
import { parsePublicKey, verifyLicense, type LicensePayload } from './license.js';

// Editions (docs/specification.md, "Editions and licenses"): the community edition takes
// any upstream address; the plus edition only the recommended relays, unless an activated
// license is valid now.

export type Edition = 'community' | 'plus';

@Injectable()
export class EditionsService implements OnApplicationBootstrap {
  private readonly logger = new Logger(EditionsService.name);
  private readonly publicKey: KeyObject | null;
  private readonly recommended: string[];
  private installation: string | undefined;

  constructor(
    private readonly env: ChatEnv,
    private readonly repository: EditionsRepository,
  ) {
    // A bad key or relay list stops the start, with the variable named.
    this.publicKey = env.LICENSE_PUBLIC_KEY ? parsePublicKey(env.LICENSE_PUBLIC_KEY) : null;
    this.recommended = env.RECOMMENDED_RELAYS.map((relay) => {
      try {
        return normalizeAddress(relay).address;
      } catch (error) {
        throw new Error(`RECOMMENDED_RELAYS: "${relay}": ${(error as Error).message}`, {
          cause: error,
        });
      }
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    this.installation = await this.repository.ensureInstallationId(randomUUID());
    if (this.edition === 'plus' && !this.publicKey) {
      this.logger.warn(
        'EDITION is plus but LICENSE_PUBLIC_KEY is not set: licenses cannot be activated',
      );
    }
  }

  get edition(): Edition {
    return this.env.EDITION === 'plus' ? 'plus' : 'community';
  }

  get installationId(): string {
    if (!this.installation) throw new Error('the installation id is read at start-up');
    return this.installation;
  }

  async view(): Promise<EditionResponse> {
    return {
      edition: this.edition,
      installationId: this.installationId,
      license: await this.currentLicense(),
      recommendedRelays: this.recommended,
    };
  }

  async activate(license: string): Promise<EditionResponse> {
    if (!this.publicKey) {
      throw new ApiError(
        'license_invalid',
        'This installation cannot verify licenses: LICENSE_PUBLIC_KEY is not configured',
      );
    }
    const check = verifyLicense(license, this.publicKey, this.installationId);
    if (!check.ok) {
      this.logger.warn({ message: 'license refused', reason: check.reason });
      throw new ApiError('license_invalid', `The license was refused: ${check.message}`);
    }
    await this.repository.saveLicense(check.payload, license.trim());
    this.logger.log({
      message: 'license activated',
      licenseId: check.payload.licenseId,
      licensee: check.payload.licensee,
      expiresAt: check.payload.expiresAt,
    });
    return this.view();
  }

  /** Whether upstream calls may go to `address` (a normalised base URL) now. */
  async allowsAddress(address: string): Promise<boolean> {
    return (await this.addressPolicy())(address);
  }

  /** A check for many addresses at once, reading the licenses once. */
  async addressPolicy(): Promise<(address: string) => boolean> {
    if (this.edition === 'community' || (await this.activeLicense())) return () => true;
    const recommended = new Set(this.recommended);
    return (address) => recommended.has(address);
  }

  /** Throws 403 `address_not_whitelisted` unless records may use `address`. */
  async assertAddressAllowed(address: string): Promise<void> {
    if (await this.allowsAddress(address)) return;
    throw new ApiError(
      'address_not_whitelisted',
      `The address ${address} is not on the whitelist: the plus edition accepts only the recommended relays` +
        `${this.recommended.length > 0 ? ` (${this.recommended.join(', ')})` : ''}. ` +
        'Use the community edition or activate a license.',
    );
  }

  private verify(row: License): LicensePayload | null {
    if (!this.publicKey) return null;
    const check = verifyLicense(row.signed, this.publicKey, this.installationId);
    return check.ok ? check.payload : null;
  }

  /** The valid license that lasts longest, verified again (the key or clock may have changed). */
  private async activeLicense(): Promise<LicensePayload | null> {
    const valid = (await this.repository.listLicenses())
      .map((row) => this.verify(row))
      .filter((payload): payload is LicensePayload => payload !== null);
    valid.sort((a, b) => Date.parse(b.expiresAt) - Date.parse(a.expiresAt));
    return valid[0] ?? null;
  }

  private async currentLicense(): Promise<LicenseSummary | null> {
    const active = await this.activeLicense();
    if (active) {
      const expiresAt = new Date(active.expiresAt).toISOString();
      return { licensee: active.licensee, expiresAt, active: true };
    }
    const [latest] = await this.repository.listLicenses();
    return latest
      ? { licensee: latest.licensee, expiresAt: latest.expiresAt.toISOString(), active: false }
      : null;
  }
}
