import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { hashPassword } from '@switchyard/security';
import { UsersRepository } from '../users/users.repository.js';

/** Creates the first chat administrator from the environment when there is none. */
@Injectable()
export class FirstAdmin implements OnApplicationBootstrap {
  private readonly logger = new Logger(FirstAdmin.name);

  constructor(
    private readonly users: UsersRepository,
    private readonly env: ChatEnv,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (await this.users.adminExists()) return;
    const { CHAT_ADMIN_USERNAME: name, CHAT_ADMIN_PASSWORD: password } = this.env;
    if (!name || !password) {
      this.logger.warn(
        'No chat administrator exists: set CHAT_ADMIN_USERNAME and CHAT_ADMIN_PASSWORD to create one',
      );
      return;
    }
    const username = name.toLowerCase();
    const outcome = await this.users.createFirstAdmin(username, await hashPassword(password));
    if (outcome === 'username_taken') {
      // Promoting an account someone registered under that name would hand them the admin.
      throw new Error(
        `CHAT_ADMIN_USERNAME "${username}" belongs to an existing user who is not an administrator; choose another name`,
      );
    }
    if (outcome === 'created') {
      this.logger.log({ message: 'created the first chat administrator', username });
    }
  }
}
