import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentUser, type Principal } from '../auth/principal.js';
import { IntIdPipe } from '../common/id.pipes.js';
import {
  A2aKeyPageResponse,
  A2aKeyResponse,
  CreateA2aKeyDto,
  CreatedA2aKeyResponse,
} from './a2a-keys.dto.js';
import { A2aKeysService } from './a2a-keys.service.js';

/** The signed-in user's own A2A keys. */
@ApiTags('A2A keys')
@ApiBearerAuth()
@Controller('api/me/a2a-keys')
export class A2aKeysController {
  constructor(private readonly keys: A2aKeysService) {}

  @Get()
  @ApiResponse({ status: 200, type: A2aKeyPageResponse })
  list(@CurrentUser() principal: Principal): Promise<A2aKeyPageResponse> {
    return this.keys.list(principal);
  }

  @Post()
  @ApiResponse({ status: 201, type: CreatedA2aKeyResponse })
  create(
    @CurrentUser() principal: Principal,
    @Body() dto: CreateA2aKeyDto,
  ): Promise<CreatedA2aKeyResponse> {
    return this.keys.create(principal, dto);
  }

  /** Revoked, not deleted: the key stays listed so its owner sees when it stopped working. */
  @Post(':id/revoke')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: A2aKeyResponse })
  revoke(
    @CurrentUser() principal: Principal,
    @Param('id', IntIdPipe) id: number,
  ): Promise<A2aKeyResponse> {
    return this.keys.revoke(principal, id);
  }
}
