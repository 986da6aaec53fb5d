import { Injectable, Logger } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type Principal } from '../auth/principal.js';
import { ChatSettingsService } from '../settings/chat-settings.service.js';
import { type InviteResponse } from './credits.dto.js';
import { InvitationsRepository, type Settlement } from './invitations.repository.js';

// Invitations (docs/credits.md, "Invitations"): each user has an invite link; someone who
// registers through it is the inviter's invitee, and after the invitee's first successful
// reply both receive the configured reward, once, within the per-address cap.

@Injectable()
export class InvitationsService {
  private readonly logger = new Logger(InvitationsService.name);

  constructor(
    private readonly invitations: InvitationsRepository,
    private readonly settings: ChatSettingsService,
  ) {}

  async mine(principal: Principal): Promise<InviteResponse> {
    const code = await this.invitations.inviteCodeOf(principal.id);
    if (code === null) throw new ApiError('not_found', `No user with id ${principal.id}`);
    const { inviteReward } = await this.settings.get();
    return { code, path: `/register?invite=${code}`, reward: inviteReward };
  }

  /** The inviter of a code given at registration; a 400 naming `invite` when none. */
  async inviterFor(code: string): Promise<number> {
    const inviterId = await this.invitations.inviterByCode(code.trim().toUpperCase());
    if (inviterId === null) {
      const message =
        'invite: this invite link does not work; register without it or ask for a new one';
      throw new ApiError('validation_failed', message, [{ field: 'invite', message }]);
    }
    return inviterId;
  }

  async record(inviteeId: number, inviterId: number, address: string): Promise<void> {
    await this.invitations.record(inviteeId, inviterId, address);
  }

  /** After a successful reply: settles the user's invitation, if it is still open. */
  async afterSuccessfulReply(userId: number): Promise<Settlement> {
    const { inviteReward, invitesPerAddress } = await this.settings.get();
    const outcome = await this.invitations.settle(userId, inviteReward, invitesPerAddress);
    if (outcome !== 'none') this.logger.log({ message: 'invitation settled', userId, outcome });
    return outcome;
  }
}
