import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PrismaService } from '@switchyard/db';
import { CreditsRepository } from './credits.repository.js';

// Invitations (docs/credits.md, "Invitations"). Settling one takes the inviter's advisory
// lock, so that concurrent settlements of several invitees count the inviter's rewards per
// address one after another and the cap holds; the invitation row's own lock and its
// `settledAt` make each invitee's settlement happen once.

/** Crockford's base 32: no I, L, O, U to misread. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function newInviteCode(): string {
  return [...randomBytes(10)].map((byte) => ALPHABET[byte % 32]).join('');
}

export type Settlement = 'rewarded' | 'capped' | 'none';

@Injectable()
export class InvitationsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly credits: CreditsRepository,
  ) {}

  /** The user's invite code, made on first use (a lost race reads the winner's). */
  async inviteCodeOf(userId: number): Promise<string | null> {
    const user = await this.prisma.chatUser.findUnique({
      where: { id: userId },
      select: { inviteCode: true },
    });
    if (!user) return null;
    if (user.inviteCode) return user.inviteCode;
    await this.prisma.chatUser.updateMany({
      where: { id: userId, inviteCode: null },
      data: { inviteCode: newInviteCode() },
    });
    return this.inviteCodeOf(userId);
  }

  async inviterByCode(code: string): Promise<number | null> {
    const user = await this.prisma.chatUser.findUnique({
      where: { inviteCode: code },
      select: { id: true, disabled: true },
    });
    return user && !user.disabled ? user.id : null;
  }

  async record(inviteeId: number, inviterId: number, address: string): Promise<void> {
    await this.prisma.creditInvitation.create({ data: { inviteeId, inviterId, address } });
  }

  /**
   * Settles the invitee's invitation if it is still open: both get `reward` credits, unless
   * the inviter already had `perAddress` invitees from the invitee's address rewarded.
   */
  async settle(inviteeId: number, reward: number, perAddress: number): Promise<Settlement> {
    const open = await this.prisma.creditInvitation.findFirst({
      where: { inviteeId, settledAt: null },
      select: { inviterId: true },
    });
    if (!open) return 'none';
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${0x1_0000}::int, ${open.inviterId}::int)`;
      const rows = await tx.$queryRaw<{ inviterId: number; address: string }[]>`
        SELECT "inviterId", "address" FROM "CreditInvitation"
        WHERE "inviteeId" = ${inviteeId} AND "settledAt" IS NULL FOR UPDATE`;
      const invitation = rows[0];
      if (!invitation) return 'none';
      const earlier = await tx.creditInvitation.count({
        where: { inviterId: invitation.inviterId, address: invitation.address, rewarded: true },
      });
      const rewarded = earlier < perAddress && reward > 0;
      await tx.creditInvitation.update({
        where: { inviteeId },
        data: { settledAt: new Date(), rewarded },
      });
      if (!rewarded) return 'capped';
      await this.credits.changeIn(tx, {
        userId: inviteeId,
        kind: 'invite',
        amount: reward,
        reason: `invitation of user ${invitation.inviterId}`,
      });
      // An inviter deleted since gets nothing (changeIn finds no user and writes nothing).
      await this.credits.changeIn(tx, {
        userId: invitation.inviterId,
        kind: 'invite',
        amount: reward,
        reason: `user ${inviteeId} joined through your invitation`,
      });
      return 'rewarded';
    });
  }
}
