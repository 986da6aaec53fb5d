import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type AdminPrincipal } from '../common/actor.js';
import { ApiErrorResponse, ApiValidationErrors } from '../common/api-docs.js';
import {
  AllowedBeforePasswordChange,
  ClientIp,
  CurrentAdmin,
  Public,
  Roles,
  SIGNED_IN,
} from './access.decorators.js';
import {
  AdminProfile,
  ChangePasswordDto,
  LoginDto,
  LoginResponse,
  PasswordChangedResponse,
  SessionsEndedResponse,
} from './auth.dto.js';
import { AuthService } from './auth.service.js';

@ApiTags('auth')
@Controller('api/auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('login')
  @HttpCode(200)
  @Public()
  @ApiOperation({
    summary: 'Log in',
    description:
      'After a few failed attempts on an account from one client address (or on many accounts from one address), each further failure doubles the wait before that address may try again; meanwhile it is answered 429 `too_many_attempts` with `Retry-After`. Other addresses are not slowed, so the owner can still sign in. Very many failures on one account from everywhere refuse it everywhere for up to a day, or until an operator runs `cli.js unlock-login`.',
  })
  @ApiOkResponse({ type: LoginResponse })
  @ApiValidationErrors()
  @ApiUnauthorizedResponse({ type: ApiErrorResponse, description: '`invalid_credentials`' })
  @ApiTooManyRequestsResponse({ type: ApiErrorResponse, description: '`too_many_attempts`' })
  login(@Body() dto: LoginDto, @ClientIp() clientIp: string): Promise<LoginResponse> {
    return this.auth.login(dto, clientIp);
  }

  @Post('logout')
  @HttpCode(204)
  @Roles(...SIGNED_IN)
  @AllowedBeforePasswordChange()
  @ApiOperation({ summary: 'End this session' })
  @ApiNoContentResponse()
  logout(@CurrentAdmin() admin: AdminPrincipal, @ClientIp() clientIp: string): Promise<void> {
    return this.auth.logout(admin, clientIp);
  }

  @Post('logout-everywhere')
  @HttpCode(200)
  @Roles(...SIGNED_IN)
  @AllowedBeforePasswordChange()
  @ApiOperation({ summary: 'End every session of this administrator, this one included' })
  @ApiOkResponse({ type: SessionsEndedResponse })
  logoutEverywhere(
    @CurrentAdmin() admin: AdminPrincipal,
    @ClientIp() clientIp: string,
  ): Promise<SessionsEndedResponse> {
    return this.auth.logoutEverywhere(admin, clientIp);
  }

  @Post('password')
  @HttpCode(200)
  @Roles(...SIGNED_IN)
  @AllowedBeforePasswordChange()
  @ApiOperation({
    summary: 'Change your password',
    description: 'Clears a forced change and ends every other session of this administrator.',
  })
  @ApiOkResponse({ type: PasswordChangedResponse })
  @ApiValidationErrors()
  changePassword(
    @CurrentAdmin() admin: AdminPrincipal,
    @Body() dto: ChangePasswordDto,
    @ClientIp() clientIp: string,
  ): Promise<PasswordChangedResponse> {
    return this.auth.changePassword(admin, dto, clientIp);
  }

  @Get('me')
  @Roles(...SIGNED_IN)
  @ApiOperation({ summary: 'The administrator of this session' })
  @ApiOkResponse({ type: AdminProfile })
  me(@CurrentAdmin() admin: AdminPrincipal): Promise<AdminProfile> {
    return this.auth.profile(admin);
  }
}
