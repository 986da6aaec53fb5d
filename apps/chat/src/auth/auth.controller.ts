import { Body, Controller, Get, HttpCode, Ip, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { LoginDto, RegisterDto, SessionResponse, UserProfileResponse } from './auth.dto.js';
import { AuthService } from './auth.service.js';
import { CurrentUser, Public, type Principal } from './principal.js';

@ApiTags('auth')
@Controller('api/auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @Post('register')
  @ApiResponse({ status: 201, type: UserProfileResponse })
  register(@Body() dto: RegisterDto, @Ip() clientAddress: string): Promise<UserProfileResponse> {
    return this.auth.register(dto, clientAddress);
  }

  @Public()
  @Post('login')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: SessionResponse })
  login(@Body() dto: LoginDto, @Ip() clientAddress: string): Promise<SessionResponse> {
    return this.auth.login(dto, clientAddress);
  }

  @ApiBearerAuth()
  @Post('logout')
  @HttpCode(204)
  logout(@CurrentUser() principal: Principal): Promise<void> {
    return this.auth.logout(principal);
  }

  @ApiBearerAuth()
  @Get('me')
  @ApiResponse({ status: 200, type: UserProfileResponse })
  me(@CurrentUser() principal: Principal): Promise<UserProfileResponse> {
    return this.auth.profile(principal);
  }
}
