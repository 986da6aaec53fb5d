import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { type FastifyRequest } from 'fastify';
import { ClientAddressResolver } from '../common/client-address.js';
import { LoginDto, RegisterDto, SessionResponse, UserProfileResponse } from './auth.dto.js';
import { AuthService } from './auth.service.js';
import { CurrentUser, Public, type Principal } from './principal.js';

@ApiTags('auth')
@Controller('api/auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly addresses: ClientAddressResolver,
  ) {}

  @Public()
  @Post('register')
  @ApiResponse({ status: 201, type: UserProfileResponse })
  register(@Body() dto: RegisterDto): Promise<UserProfileResponse> {
    return this.auth.register(dto);
  }

  @Public()
  @Post('login')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: SessionResponse })
  login(@Body() dto: LoginDto, @Req() request: FastifyRequest): Promise<SessionResponse> {
    const address = this.addresses.resolve(
      request.socket.remoteAddress,
      request.headers['x-forwarded-for'],
    );
    return this.auth.login(dto, address);
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
