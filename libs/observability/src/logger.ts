import { type LoggerService } from '@nestjs/common';
import { pino, type Logger, type LevelWithSilent, type DestinationStream } from 'pino';
import { redactPaths, redactSecrets } from './redaction.js';
import { currentRequestId } from './request-context.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  service: string;
  level: LevelWithSilent;
  /** Defaults to stdout; tests pass a stream to read the lines. */
  destination?: DestinationStream;
}

/** Structured JSON lines, each with the service, the request id in scope, and no secrets. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: options.service },
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: redactPaths(), censor: '[redacted]' },
      mixin: () => {
        const requestId = currentRequestId();
        return requestId ? { requestId } : {};
      },
      hooks: { streamWrite: (line) => redactSecrets(line) },
    },
    options.destination ?? bufferedStdout(),
  );
}

/**
 * Standard output, written in blocks of up to 4 KiB rather than a write per line (each
 * write is a system call, a measurable cost per request on a busy service); what is
 * buffered goes out at least every 200 ms, and on shutdown (`logger.flush`).
 */
function bufferedStdout(): DestinationStream {
  const destination = pino.destination({ sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), 200).unref();
  return destination;
}

/** Routes Nest's own log calls into the same JSON stream. */
export class NestLoggerBridge implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.write('info', message, context);
  }
  error(message: unknown, stackOrContext?: string, context?: string): void {
    const stack = context ? stackOrContext : undefined;
    this.write('error', message, context ?? stackOrContext, stack);
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('trace', message, context);
  }
  fatal(message: unknown, context?: string): void {
    this.write('fatal', message, context);
  }

  private write(
    level: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal',
    message: unknown,
    context?: string,
    stack?: string,
  ): void {
    if (message instanceof Error) {
      this.logger[level]({ context, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ context, ...message });
    } else {
      this.logger[level]({ context, ...(stack ? { stack } : {}) }, String(message));
    }
  }
}
