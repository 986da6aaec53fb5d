import { Injectable } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { ApiError } from '@switchyard/contracts';
import { type Prisma } from '@switchyard/db';
import { ModelsRepository } from '../models/models.repository.js';
import { type ChatSettingsResponse, type UpdateChatSettingsDto } from './chat-settings.dto.js';
import { ChatSettingsRepository } from './chat-settings.repository.js';

// The chat app's settings (docs/credits.md, "Settings"): stored in Postgres and read when
// they are used, so a change applies at once in every chat process, without a restart.

const REGISTRATION_GRANT = 'credits.registrationGrant';
const INVITE_REWARD = 'credits.inviteReward';
const INVITES_PER_ADDRESS = 'credits.invitesPerAddress';
/** The A2A decision model; '' stored means none (null cannot be a Json column's value here). */
const A2A_MODEL = 'a2a.model';

export const DEFAULT_REGISTRATION_GRANT = 100;
export const DEFAULT_INVITE_REWARD = 50;
export const DEFAULT_INVITES_PER_ADDRESS = 3;

const numberOr = (value: Prisma.JsonValue | undefined, fallback: number): number =>
  typeof value === 'number' ? value : fallback;

@Injectable()
export class ChatSettingsService {
  constructor(
    private readonly settings: ChatSettingsRepository,
    private readonly models: ModelsRepository,
    private readonly env: ChatEnv,
  ) {}

  async get(): Promise<ChatSettingsResponse> {
    const stored = await this.settings.read([
      REGISTRATION_GRANT,
      INVITE_REWARD,
      INVITES_PER_ADDRESS,
      A2A_MODEL,
    ]);
    return {
      registrationGrant: numberOr(stored.get(REGISTRATION_GRANT), DEFAULT_REGISTRATION_GRANT),
      inviteReward: numberOr(stored.get(INVITE_REWARD), DEFAULT_INVITE_REWARD),
      invitesPerAddress: numberOr(stored.get(INVITES_PER_ADDRESS), DEFAULT_INVITES_PER_ADDRESS),
      a2aModel: this.a2aModelOf(stored.get(A2A_MODEL)),
    };
  }

  async registrationGrant(): Promise<number> {
    return (await this.get()).registrationGrant;
  }

  /**
   * The model that answers A2A tasks, null for none. Until an administrator saves one,
   * CHAT_A2A_MODEL (the setting's place before it moved here) still names it.
   */
  async a2aModel(): Promise<string | null> {
    return this.a2aModelOf((await this.settings.read([A2A_MODEL])).get(A2A_MODEL));
  }

  private a2aModelOf(stored: Prisma.JsonValue | undefined): string | null {
    if (typeof stored === 'string') return stored === '' ? null : stored;
    return this.env.CHAT_A2A_MODEL ?? null;
  }

  /** Saves the fields sent; an A2A model must be a chat model this app has. */
  async update(dto: UpdateChatSettingsDto): Promise<ChatSettingsResponse> {
    const values: Record<string, Prisma.InputJsonValue> = {};
    if (dto.registrationGrant !== undefined) values[REGISTRATION_GRANT] = dto.registrationGrant;
    if (dto.inviteReward !== undefined) values[INVITE_REWARD] = dto.inviteReward;
    if (dto.invitesPerAddress !== undefined) values[INVITES_PER_ADDRESS] = dto.invitesPerAddress;
    if (dto.a2aModel !== undefined) {
      if (dto.a2aModel !== null) await this.checkA2aModel(dto.a2aModel);
      values[A2A_MODEL] = dto.a2aModel ?? '';
    }
    if (Object.keys(values).length > 0) await this.settings.save(values);
    return this.get();
  }

  private async checkA2aModel(name: string): Promise<void> {
    const model = await this.models.findByName(name);
    const problem = !model
      ? `a2aModel: no model is named "${name}"`
      : model.purpose !== 'chat'
        ? `a2aModel: "${name}" is a ${model.purpose} model; A2A tasks need a chat model`
        : null;
    if (problem !== null) {
      throw new ApiError('validation_failed', problem, [{ field: 'a2aModel', message: problem }]);
    }
  }
}
