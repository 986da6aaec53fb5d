import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ChatSettingsResponse, UpdateChatSettingsDto } from './chat-settings.dto.js';
import { ChatSettingsService } from './chat-settings.service.js';

// Under /api/admin: administrators only, as every route there (auth/principal.ts).

@ApiTags('admin: chat settings')
@ApiBearerAuth()
@Controller('api/admin/chat-settings')
export class ChatSettingsController {
  constructor(private readonly settings: ChatSettingsService) {}

  @Get()
  @ApiResponse({ status: 200, type: ChatSettingsResponse })
  get(): Promise<ChatSettingsResponse> {
    return this.settings.get();
  }

  /** Changes the fields sent; they apply to the next registration or task, no restart. */
  @Put()
  @ApiResponse({ status: 200, type: ChatSettingsResponse })
  update(@Body() dto: UpdateChatSettingsDto): Promise<ChatSettingsResponse> {
    return this.settings.update(dto);
  }
}
