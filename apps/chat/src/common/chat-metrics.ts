import { Inject, Injectable, Logger } from '@nestjs/common';
import { type A2aTaskState, PrismaService } from '@switchyard/db';
import { Counter, Gauge, Histogram, readWithin, Registry } from '@switchyard/observability';
import { type ToolStep } from '../tools/tool-step.js';
import { activeUsers } from './active-users.repository.js';

// The chat app's own Prometheus metrics (docs/operations.md, "Metrics"): who is active,
// the tool steps replies run, and the A2A tasks other agents send. Active users are read
// from Postgres when scraped, so every replica reports the whole app (take the max across
// replicas, not the sum).

/** A scrape waits this long for Postgres, then answers with the last values read. */
const READ_TIMEOUT_MS = 2_000;

export const ACTIVE_WINDOWS = ['5m', '1h', '24h'] as const;
type ActiveWindow = (typeof ACTIVE_WINDOWS)[number];

@Injectable()
export class ChatMetrics {
  private readonly logger = new Logger(ChatMetrics.name);
  private readonly toolSteps: Counter<'kind' | 'outcome'>;
  private readonly toolStepSeconds: Histogram<'kind'>;
  private readonly a2aTasks: Counter<'state'>;
  private lastActive: Record<ActiveWindow, number> = { '5m': 0, '1h': 0, '24h': 0 };

  constructor(@Inject(Registry) registry: Registry, prisma: PrismaService) {
    this.toolSteps = new Counter({
      name: 'chat_tool_steps_total',
      help: 'Tool steps of replies (MCP tools and resources, A2A delegations, unreachable servers), by kind and outcome: ok or the error code.',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    });
    this.toolStepSeconds = new Histogram({
      name: 'chat_tool_step_duration_seconds',
      help: 'How long each tool step ran, by kind.',
      labelNames: ['kind'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.a2aTasks = new Counter({
      name: 'chat_a2a_tasks_total',
      help: "A2A tasks other agents sent to this app's agent, by the state each reached.",
      labelNames: ['state'],
      registers: [registry],
    });
    const activeUsers: Gauge<'window'> = new Gauge({
      name: 'chat_active_users',
      help: 'Users who sent a chat message or an A2A task in the window (5m, 1h, 24h); read from Postgres at scrape.',
      labelNames: ['window'],
      registers: [registry],
      collect: async () => {
        await this.readActiveUsers(prisma);
        for (const window of ACTIVE_WINDOWS) {
          activeUsers.set({ window }, this.lastActive[window]);
        }
      },
    });
  }

  /** The last values stay when Postgres does not answer in time. */
  private async readActiveUsers(prisma: PrismaService): Promise<void> {
    try {
      const [row] = await readWithin(activeUsers(prisma), READ_TIMEOUT_MS, 'Postgres');
      if (row) this.lastActive = row;
    } catch (error) {
      this.logger.warn({ message: 'active users not read', reason: (error as Error).message });
    }
  }

  toolStep(step: ToolStep): void {
    this.toolSteps.inc({
      kind: step.kind,
      outcome: step.ok ? 'ok' : (step.error?.code ?? 'tool_failed'),
    });
    this.toolStepSeconds.observe({ kind: step.kind }, step.durationMs / 1000);
  }

  /** A task saved in a state it was not in before (a new task counts as `submitted` or later). */
  a2aTask(state: A2aTaskState): void {
    this.a2aTasks.inc({ state });
  }
}
