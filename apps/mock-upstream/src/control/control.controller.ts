import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Put,
} from '@nestjs/common';
import { AccountPool, type AccountSpec, type AccountStats } from '../accounts/account-pool.js';
import { RequestLog, type ReceivedRequest } from '../accounts/request-log.js';
import { FaultPlan } from '../faults/fault-plan.js';
import { INITIAL_ACCOUNTS } from '../mock-upstream.options.js';
import { AccountDto, DefaultsDto, FaultDto } from './control.dto.js';

/**
 * `/_mock/*`: how tests shape the provider at run time (accounts, faults) and read what it
 * saw. Meant for loopback only, like the mock itself.
 */
@Controller('_mock')
export class ControlController {
  constructor(
    private readonly accounts: AccountPool,
    private readonly faults: FaultPlan,
    private readonly log: RequestLog,
    @Inject(INITIAL_ACCOUNTS) private readonly initialAccounts: AccountSpec[],
  ) {}

  @Get('accounts')
  stats(): AccountStats[] {
    return this.accounts.stats();
  }

  /** The last requests an account received, oldest first (without their Authorization). */
  @Get('accounts/:key/requests')
  requests(@Param('key') key: string): ReceivedRequest[] {
    return this.log.of(key);
  }

  @Put('accounts/:key')
  upsertAccount(@Param('key') key: string, @Body() body: AccountDto): AccountSpec {
    const spec = {
      key,
      rpm: body.rpm ?? 0,
      tpm: body.tpm ?? 0,
      concurrency: body.concurrency ?? 0,
      banned: body.banned ?? false,
      ...(body.echoKey ? { echoKey: true } : {}),
    };
    this.accounts.upsert(spec);
    return spec;
  }

  @Post('faults')
  @HttpCode(204)
  script(@Body() body: FaultDto): void {
    const { key = '*', times, ...fault } = body;
    this.faults.script(key, fault, times ?? Infinity);
  }

  @Delete('faults')
  @HttpCode(204)
  clearFaults(): void {
    this.faults.clear();
  }

  @Patch('defaults')
  @HttpCode(204)
  setDefaults(@Body() body: DefaultsDto): void {
    this.faults.setDefaults(body);
  }

  @Post('reset')
  @HttpCode(204)
  reset(): void {
    this.accounts.reset(this.initialAccounts);
    this.faults.clear();
    this.log.clear();
  }
}
