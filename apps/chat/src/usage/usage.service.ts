import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type Principal } from '../auth/principal.js';
import { type UsageResponse } from '../users/users.dto.js';
import { toUsage } from '../users/users.mapper.js';
import { UsersRepository } from '../users/users.repository.js';

@Injectable()
export class UsageService {
  constructor(private readonly users: UsersRepository) {}

  async totals(principal: Principal): Promise<UsageResponse> {
    const user = await this.users.findById(principal.id);
    if (!user) throw new ApiError('unauthenticated', 'Sign in again');
    return toUsage(user);
  }
}
