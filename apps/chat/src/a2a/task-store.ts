import { Injectable } from '@nestjs/common';
import { Task, TaskState, type ListTasksRequest, type ListTasksResponse } from '@a2a-js/sdk';
import { type ServerCallContext, type TaskStore, type User } from '@a2a-js/sdk/server';
import { A2aTaskState, Prisma, PrismaService } from '@switchyard/db';
import { ChatMetrics } from '../common/chat-metrics.js';

// The A2A tasks of this app's agent, in Postgres (docs/tools.md, A2A): each row holds the
// protocol's Task as last saved, in its JSON form, and the states it went through. A task
// belongs to the user whose A2A key sent it; no other key sees it.

const MAX_PAGE = 100;

/** The caller an A2A key authenticated. */
export class A2aUser implements User {
  constructor(readonly userId: number) {}

  get isAuthenticated(): boolean {
    return true;
  }

  get userName(): string {
    return String(this.userId);
  }
}

function ownerOf(context: ServerCallContext): number {
  const user = context.user;
  if (!(user instanceof A2aUser)) throw new Error('A2A task store used without an A2A key');
  return user.userId;
}

/** The states this agent goes through; it never asks for input or authentication. */
const STORED_STATES = new Map<TaskState, A2aTaskState>([
  [TaskState.TASK_STATE_SUBMITTED, A2aTaskState.submitted],
  [TaskState.TASK_STATE_WORKING, A2aTaskState.working],
  [TaskState.TASK_STATE_COMPLETED, A2aTaskState.completed],
  [TaskState.TASK_STATE_FAILED, A2aTaskState.failed],
  [TaskState.TASK_STATE_CANCELED, A2aTaskState.canceled],
]);

function storedState(task: Task): A2aTaskState {
  const state = STORED_STATES.get(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
  if (!state) throw new Error(`A2A task ${task.id} reached a state this agent never sets`);
  return state;
}

interface Transition {
  state: A2aTaskState;
  at: string;
}

@Injectable()
export class PrismaTaskStore implements TaskStore {
  constructor(
    private readonly prisma: PrismaService,
    private readonly metrics: ChatMetrics,
  ) {}

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const userId = ownerOf(context);
    const state = storedState(task);
    const json = Task.toJSON(task) as Prisma.InputJsonValue;
    const at = task.status?.timestamp ?? new Date().toISOString();
    const changed = await this.prisma.$transaction(async (tx) => {
      const stored = await tx.a2aTask.findUnique({ where: { id: task.id } });
      if (!stored) {
        await tx.a2aTask.create({
          data: {
            id: task.id,
            userId,
            contextId: task.contextId,
            state,
            task: json,
            transitions: [{ state, at }] satisfies Transition[],
          },
        });
        return true;
      }
      if (stored.userId !== userId) throw new Error(`A2A task ${task.id} is another user's`);
      const transitions = stored.transitions as unknown as Transition[];
      await tx.a2aTask.update({
        where: { id: task.id },
        data: {
          state,
          task: json,
          ...(stored.state === state
            ? {}
            : {
                transitions: [...transitions, { state, at }] as unknown as Prisma.InputJsonValue,
              }),
        },
      });
      return stored.state !== state;
    });
    if (changed) this.metrics.a2aTask(state);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const row = await this.prisma.a2aTask.findFirst({
      where: { id: taskId, userId: ownerOf(context) },
    });
    return row ? Task.fromJSON(row.task) : undefined;
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = Math.min(Math.max(params.pageSize ?? 50, 1), MAX_PAGE);
    const offset = /^\d+$/.test(params.pageToken) ? Number(params.pageToken) : 0;
    const state = STORED_STATES.get(params.status);
    const where: Prisma.A2aTaskWhereInput = {
      userId: ownerOf(context),
      ...(params.contextId ? { contextId: params.contextId } : {}),
      ...(state ? { state } : {}),
    };
    const [rows, totalSize] = await Promise.all([
      this.prisma.a2aTask.findMany({
        where,
        orderBy: [{ updatedAt: 'desc' }, { id: 'asc' }],
        skip: offset,
        take: pageSize,
      }),
      this.prisma.a2aTask.count({ where }),
    ]);
    const next = offset + rows.length;
    return {
      tasks: rows.map((row) => Task.fromJSON(row.task)),
      nextPageToken: next < totalSize ? String(next) : '',
      pageSize,
      totalSize,
    };
  }
}
