import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AdminEnv, ConfigurationError, loadEnvironment } from '@switchyard/config';
import { ApiError } from '@switchyard/contracts';
import { NestLoggerBridge, createLogger } from '@switchyard/observability';
import { CliModule } from './cli/cli.module.js';
import { COMMANDS, USAGE, UsageError, type Output } from './cli/commands.js';

// Operator commands against the gateway's database: `node dist/cli.js <command>`.
// Exit codes: 0 done, 1 failed, 2 wrong command line or configuration.

const io: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    io.err(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  let env: AdminEnv;
  try {
    env = loadEnvironment(AdminEnv);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    io.err(error.message);
    return 2;
  }
  const level = env.LOG_LEVEL === 'debug' || env.LOG_LEVEL === 'trace' ? env.LOG_LEVEL : 'warn';
  const logger = createLogger({ service: 'admin-cli', level, destination: process.stderr });
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(env), {
    logger: new NestLoggerBridge(logger),
    abortOnError: false,
  });
  try {
    await command(app, args, io);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${name}: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof ApiError) {
      io.err(`${name}: ${error.message}`);
      return 1;
    }
    logger.error({ err: error }, `${name} failed`);
    return 1;
  } finally {
    await app.close();
  }
}

const code = await main(process.argv.slice(2)).catch((error: unknown) => {
  io.err(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return 1;
});
// Connections are closed by now; whatever might still linger (a keep-alive socket, a
// client still connecting) must not keep a finished command alive.
process.exit(code);
