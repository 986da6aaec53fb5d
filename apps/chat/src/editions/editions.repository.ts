import { Injectable } from '@nestjs/common';
import { PrismaService, type License } from '@switchyard/db';
import { type LicensePayload } from './license.js';

const INSTALLATION_ID = 'installation_id';

@Injectable()
export class EditionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The installation id, stored as `candidate` unless one exists (race-free). */
  async ensureInstallationId(candidate: string): Promise<string> {
    await this.prisma.setting.createMany({
      data: [{ key: INSTALLATION_ID, value: candidate }],
      skipDuplicates: true,
    });
    const row = await this.prisma.setting.findUniqueOrThrow({ where: { key: INSTALLATION_ID } });
    if (typeof row.value !== 'string') {
      throw new Error(`the setting ${INSTALLATION_ID} is not a string; fix it in the database`);
    }
    return row.value;
  }

  /** Stores an activated license; activating the same license again changes nothing. */
  async saveLicense(payload: LicensePayload, signed: string): Promise<void> {
    await this.prisma.license.createMany({
      data: [
        {
          licenseId: payload.licenseId,
          licensee: payload.licensee,
          edition: payload.edition,
          installationId: payload.installationId,
          issuedAt: new Date(payload.issuedAt),
          expiresAt: new Date(payload.expiresAt),
          signed,
        },
      ],
      skipDuplicates: true,
    });
  }

  /** Every activated license, most recent first. */
  listLicenses(): Promise<License[]> {
    return this.prisma.license.findMany({ orderBy: { activatedAt: 'desc' } });
  }
}
