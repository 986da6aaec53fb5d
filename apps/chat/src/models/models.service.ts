import { Injectable, Logger } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { ApiError } from '@switchyard/contracts';
import { isRecordNotFound, isUniqueViolation, type ChatModel } from '@switchyard/db';
import { wholeList } from '@switchyard/service';
import { type Principal } from '../auth/principal.js';
import { type CreditPrice } from '../credits/pricing.js';
import { PURPOSES, type PurposeName } from '../common/platform.js';
import { assistantIdOf } from './assistant-link.js';
import {
  type CreateModelDto,
  type FromLinkResponse,
  type ModelPageResponse,
  type ModelResponse,
  type ToolModeName,
  type UpdateModelDto,
  type VisibleModelPageResponse,
  type VisibleModelResponse,
} from './models.dto.js';
import { ModelsRepository } from './models.repository.js';

/** A model a user may use now, and what it is for. */
export interface UsableModel {
  name: string;
  purpose: PurposeName;
  toolMode: ToolModeName;
  vision: boolean;
  price: CreditPrice;
}

function toModel(model: ChatModel): ModelResponse {
  return {
    id: model.id,
    platform: model.platform,
    name: model.name,
    purpose: model.purpose,
    open: model.open,
    toolMode: model.toolMode,
    contextTokens: model.contextTokens,
    vision: model.vision,
    ...pricesOf(model),
    createdAt: model.createdAt.toISOString(),
    updatedAt: model.updatedAt.toISOString(),
  };
}

/** Chat models first, then drawing and music: a user who opens the app wants to chat.
 * The sort is stable, so each group keeps the repository's order by name. */
function byPurpose(a: ChatModel, b: ChatModel): number {
  return PURPOSES.indexOf(a.purpose) - PURPOSES.indexOf(b.purpose);
}

function pricesOf(
  model: ChatModel,
): Pick<ModelResponse, 'creditsPerCall' | 'creditsPer1kInput' | 'creditsPer1kOutput'> {
  return {
    creditsPerCall: model.creditsPerCall,
    creditsPer1kInput: model.creditsPer1kInput,
    creditsPer1kOutput: model.creditsPer1kOutput,
  };
}

function toVisible(model: ChatModel): VisibleModelResponse {
  return {
    name: model.name,
    platform: model.platform,
    purpose: model.purpose,
    toolMode: model.toolMode,
    contextTokens: model.contextTokens,
    vision: model.vision,
    ...pricesOf(model),
  };
}

@Injectable()
export class ModelsService {
  private readonly logger = new Logger(ModelsService.name);

  constructor(
    private readonly models: ModelsRepository,
    private readonly env: ChatEnv,
  ) {}

  /**
   * The chat model list: open models, the user's permitted ones and those their plan
   * includes; administrators see all.
   */
  async listVisible(principal: Principal): Promise<VisibleModelPageResponse> {
    const rows =
      principal.role === 'admin'
        ? await this.models.listAll()
        : await this.models.listOpenOrPermitted([
            ...principal.modelPermissions,
            ...(await this.models.includedByPlan(principal.id)),
          ]);
    return wholeList(rows.sort(byPurpose).map(toVisible));
  }

  /** Throws 403 `model_not_permitted` unless `name` is a model the user may use. */
  async resolveForUse(principal: Principal, name: string): Promise<UsableModel> {
    const model = await this.models.findByName(name);
    const allowed =
      model !== null &&
      (principal.role === 'admin' ||
        model.open ||
        principal.modelPermissions.includes(name) ||
        (await this.models.includedByPlan(principal.id)).includes(name));
    if (!model || !allowed) {
      throw new ApiError(
        'model_not_permitted',
        `You may not use the model "${name}": ask an administrator to open it, to give you permission or a plan that includes it`,
      );
    }
    return {
      name: model.name,
      purpose: model.purpose,
      toolMode: model.toolMode,
      vision: model.vision,
      price: {
        perCall: model.creditsPerCall,
        per1kInput: model.creditsPer1kInput,
        per1kOutput: model.creditsPer1kOutput,
      },
    };
  }

  fromLink(link: string): FromLinkResponse {
    const result = assistantIdOf(link);
    if (!result.ok) {
      throw new ApiError(
        'invalid_assistant_link',
        `Not a custom assistant link: ${result.reason}. Expected a link like https://chatgpt.com/g/g-abc123-name`,
      );
    }
    return { model: this.env.CUSTOM_ASSISTANT_PREFIX + result.id };
  }

  async list(): Promise<ModelPageResponse> {
    return wholeList((await this.models.listAll()).map(toModel));
  }

  async create(dto: CreateModelDto): Promise<ModelResponse> {
    try {
      const model = await this.models.createModel({
        name: dto.name,
        platform: dto.platform ?? 'openai',
        purpose: dto.purpose ?? 'chat',
        open: dto.open ?? false,
        toolMode: dto.toolMode ?? 'off',
        contextTokens: dto.contextTokens ?? null,
        vision: dto.vision ?? false,
        creditsPerCall: dto.creditsPerCall ?? 0,
        creditsPer1kInput: dto.creditsPer1kInput ?? 0,
        creditsPer1kOutput: dto.creditsPer1kOutput ?? 0,
      });
      this.logger.log({ message: 'model added', model: model.name, open: model.open });
      return toModel(model);
    } catch (error) {
      throw this.translate(error, dto.name);
    }
  }

  /** The model with this name, created or changed so that everyone may use it (operator CLI). */
  async ensureOpen(
    name: string,
    purpose: CreateModelDto['purpose'],
    vision: boolean,
  ): Promise<ModelResponse> {
    const existing = await this.models.findByName(name);
    if (!existing) return this.create({ name, purpose, vision, open: true });
    return this.update(existing.id, { purpose, vision, open: true });
  }

  async update(id: number, dto: UpdateModelDto): Promise<ModelResponse> {
    try {
      const model = await this.models.updateModel(id, dto);
      this.logger.log({ message: 'model changed', modelId: id, ...dto });
      return toModel(model);
    } catch (error) {
      throw this.translate(error, dto.name, id);
    }
  }

  async remove(id: number): Promise<void> {
    try {
      await this.models.deleteModel(id);
    } catch (error) {
      throw this.translate(error, undefined, id);
    }
  }

  private translate(error: unknown, name?: string, id?: number): unknown {
    if (isUniqueViolation(error)) {
      return new ApiError('conflict', `A model named "${name ?? ''}" already exists`);
    }
    if (isRecordNotFound(error)) return new ApiError('not_found', `No model with id ${id ?? ''}`);
    return error;
  }
}
