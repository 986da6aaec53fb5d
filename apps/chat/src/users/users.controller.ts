import { Body, Controller, Get, Param, Patch, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentUser, type Principal } from '../auth/principal.js';
import { IntIdPipe } from '../common/id.pipes.js';
import { AdminUserResponse, ListUsersQuery, UpdateUserDto, UserPageResponse } from './users.dto.js';
import { UsersService } from './users.service.js';

@ApiTags('admin: users')
@ApiBearerAuth()
@Controller('api/admin/users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get()
  @ApiResponse({ status: 200, type: UserPageResponse })
  list(@Query() query: ListUsersQuery): Promise<UserPageResponse> {
    return this.users.list(query);
  }

  @Patch(':id')
  @ApiResponse({ status: 200, type: AdminUserResponse })
  update(
    @CurrentUser() actor: Principal,
    @Param('id', IntIdPipe) id: number,
    @Body() dto: UpdateUserDto,
  ): Promise<AdminUserResponse> {
    return this.users.update(actor, id, dto);
  }
}
