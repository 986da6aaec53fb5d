import { Injectable, Logger } from '@nestjs/common';
import { SessionStore } from '@switchyard/auth';
import { ApiError } from '@switchyard/contracts';
import { isRecordNotFound } from '@switchyard/db';
import { skipTake } from '@switchyard/service';
import { type Principal } from '../auth/principal.js';
import { ModelsRepository } from '../models/models.repository.js';
import {
  type AdminUserResponse,
  type ListUsersQuery,
  type UpdateUserDto,
  type UserPageResponse,
} from './users.dto.js';
import { toAdminUser } from './users.mapper.js';
import { UsersRepository } from './users.repository.js';

@Injectable()
export class UsersService {
  private readonly logger = new Logger(UsersService.name);

  constructor(
    private readonly users: UsersRepository,
    private readonly models: ModelsRepository,
    private readonly sessions: SessionStore,
  ) {}

  async list(query: ListUsersQuery): Promise<UserPageResponse> {
    const search = query.search === '' ? undefined : query.search;
    const { skip, take } = skipTake(query);
    const { rows, total } = await this.users.searchUsers(search, skip, take);
    return { items: rows.map(toAdminUser), total };
  }

  async update(actor: Principal, id: number, dto: UpdateUserDto): Promise<AdminUserResponse> {
    if (dto.disabled === true && id === actor.id) {
      throw new ApiError('conflict', 'You cannot disable your own account');
    }
    const changes: { modelPermissions?: string[]; disabled?: boolean } = {};
    if (dto.modelPermissions !== undefined) {
      changes.modelPermissions = await this.knownModels(dto.modelPermissions);
    }
    if (dto.disabled !== undefined) changes.disabled = dto.disabled;
    let user;
    try {
      user = await this.users.updateAccess(id, changes);
    } catch (error) {
      if (isRecordNotFound(error)) throw new ApiError('not_found', `No user with id ${id}`);
      throw error;
    }
    if (dto.disabled === true) await this.sessions.endAll(id);
    this.logger.log({ message: 'user access changed', userId: id, by: actor.id, ...changes });
    return toAdminUser(user);
  }

  /** The names, without duplicates, once each is known to be a model. */
  private async knownModels(names: string[]): Promise<string[]> {
    const unique = [...new Set(names.map((name) => name.trim()))];
    const known = new Set(await this.models.existingNames(unique));
    const unknown = unique.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new ApiError('validation_failed', `Unknown model(s): ${unknown.join(', ')}`, [
        { field: 'modelPermissions', message: `add these models first: ${unknown.join(', ')}` },
      ]);
    }
    return unique;
  }
}
