import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { isRecordNotFound } from '@switchyard/db';
import { type Principal } from '../auth/principal.js';
import { ModelsService } from '../models/models.service.js';
import { type PreferencesResponse } from './preferences.dto.js';
import { PreferencesRepository, type StoredPreferences } from './preferences.repository.js';

function toResponse(stored: StoredPreferences): PreferencesResponse {
  return { model: stored.preferredModel, customAssistants: stored.customAssistants };
}

/** What a user chose in the chat app, kept on the server so every device sees it. */
@Injectable()
export class PreferencesService {
  constructor(
    private readonly preferences: PreferencesRepository,
    private readonly models: ModelsService,
  ) {}

  async get(principal: Principal): Promise<PreferencesResponse> {
    const stored = await this.preferences.findForUser(principal.id);
    if (!stored) throw new ApiError('unauthenticated', 'Your account no longer exists');
    return toResponse(stored);
  }

  async choose(principal: Principal, model: string | null): Promise<PreferencesResponse> {
    try {
      return toResponse(await this.preferences.setPreferredModel(principal.id, model));
    } catch (error) {
      if (isRecordNotFound(error))
        throw new ApiError('unauthenticated', 'Your account no longer exists');
      throw error;
    }
  }

  /** Saves the assistant of a public link to the user and makes it their chosen model. */
  async addCustomAssistant(principal: Principal, link: string): Promise<PreferencesResponse> {
    const { model } = this.models.fromLink(link);
    await this.preferences.addCustomAssistant(principal.id, model);
    return this.choose(principal, model);
  }
}
