import { ChatEnv } from '@switchyard/config';
import { startService } from '@switchyard/service';
import { ChatModule } from './chat.module.js';

await startService({
  name: 'chat',
  environment: ChatEnv,
  module: (env) => ChatModule.forRoot(env),
  port: (env) => env.CHAT_PORT,
});
