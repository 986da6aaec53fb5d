import { Injectable } from '@nestjs/common';
import { ChatRole, Prisma, PrismaService, type ChatUser } from '@switchyard/db';

/** Serialises first-administrator creation across every chat instance that starts at once. */
const FIRST_ADMIN_LOCK = 0x63686174_01; // "chat" 01

export interface NewUser {
  username: string;
  email: string | null;
  passwordHash: string;
}

const WITH_PLAN = {
  creditPlan: { select: { plan: { select: { id: true, name: true } } } },
} satisfies Prisma.ChatUserInclude;

/** A user as administrators list them: with the credit plan they are on, if any. */
export type ListedUser = Prisma.ChatUserGetPayload<{ include: typeof WITH_PLAN }>;

export interface UserPage {
  rows: ListedUser[];
  total: number;
}

export interface UsageIncrement {
  promptTokens: number;
  completionTokens: number;
}

@Injectable()
export class UsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  findById(id: number): Promise<ChatUser | null> {
    return this.prisma.chatUser.findUnique({ where: { id } });
  }

  findByUsername(username: string): Promise<ChatUser | null> {
    return this.prisma.chatUser.findUnique({ where: { username } });
  }

  async emailTaken(email: string): Promise<boolean> {
    return (await this.prisma.chatUser.count({ where: { email } })) > 0;
  }

  /** Throws Prisma's unique violation when the username or email is taken. */
  createUser(user: NewUser): Promise<ChatUser> {
    return this.prisma.chatUser.create({ data: { ...user, role: ChatRole.user } });
  }

  async adminExists(): Promise<boolean> {
    return (await this.prisma.chatUser.count({ where: { role: ChatRole.admin } })) > 0;
  }

  /**
   * Creates the administrator unless one exists, under a transaction-scoped advisory lock
   * so that instances starting together create exactly one. Returns what happened.
   */
  createFirstAdmin(
    username: string,
    passwordHash: string,
  ): Promise<'created' | 'exists' | 'username_taken'> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${FIRST_ADMIN_LOCK}::bigint)`;
      if ((await tx.chatUser.count({ where: { role: ChatRole.admin } })) > 0) return 'exists';
      if (await tx.chatUser.findUnique({ where: { username } })) return 'username_taken';
      await tx.chatUser.create({ data: { username, passwordHash, role: ChatRole.admin } });
      return 'created';
    });
  }

  /** Users whose username or email contains `search`, newest first. */
  async searchUsers(search: string | undefined, skip: number, take: number): Promise<UserPage> {
    const where: Prisma.ChatUserWhereInput = search
      ? {
          OR: [
            { username: { contains: search, mode: 'insensitive' } },
            { email: { contains: search, mode: 'insensitive' } },
          ],
        }
      : {};
    const [rows, total] = await this.prisma.$transaction([
      this.prisma.chatUser.findMany({
        where,
        orderBy: { id: 'desc' },
        skip,
        take,
        include: WITH_PLAN,
      }),
      this.prisma.chatUser.count({ where }),
    ]);
    return { rows, total };
  }

  updateAccess(
    id: number,
    changes: { modelPermissions?: string[]; disabled?: boolean },
  ): Promise<ListedUser> {
    return this.prisma.chatUser.update({ where: { id }, data: changes, include: WITH_PLAN });
  }
}
