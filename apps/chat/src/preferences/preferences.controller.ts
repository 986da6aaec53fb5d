import { Body, Controller, Get, HttpCode, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentUser, type Principal } from '../auth/principal.js';
import {
  AddCustomAssistantDto,
  PreferencesResponse,
  UpdatePreferencesDto,
} from './preferences.dto.js';
import { PreferencesService } from './preferences.service.js';

@ApiTags('preferences')
@ApiBearerAuth()
@Controller('api/me')
export class PreferencesController {
  constructor(private readonly preferences: PreferencesService) {}

  @Get('preferences')
  @ApiResponse({ status: 200, type: PreferencesResponse })
  get(@CurrentUser() principal: Principal): Promise<PreferencesResponse> {
    return this.preferences.get(principal);
  }

  @Patch('preferences')
  @ApiResponse({ status: 200, type: PreferencesResponse })
  update(
    @CurrentUser() principal: Principal,
    @Body() dto: UpdatePreferencesDto,
  ): Promise<PreferencesResponse> {
    return dto.model === undefined
      ? this.preferences.get(principal)
      : this.preferences.choose(principal, dto.model);
  }

  /** A custom assistant's public link: saved to the user and chosen. */
  @Post('custom-assistants')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: PreferencesResponse })
  addCustomAssistant(
    @CurrentUser() principal: Principal,
    @Body() dto: AddCustomAssistantDto,
  ): Promise<PreferencesResponse> {
    return this.preferences.addCustomAssistant(principal, dto.link);
  }
}
