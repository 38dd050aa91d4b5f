import { Global, Module } from '@nestjs/common';
import { AppConfig, loadConfig } from './config';

export const CONFIG = 'APP_CONFIG';

@Global()
@Module({
  providers: [{ provide: CONFIG, useFactory: (): AppConfig => loadConfig() }],
  exports: [CONFIG],
})
export class ConfigModule {}
