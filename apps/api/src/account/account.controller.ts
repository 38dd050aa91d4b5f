import { Controller, Delete, HttpCode } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { ErasureRequests } from '../conversations/erasure-requests.service';
import { AUTH_PROBLEMS, ApiProblems } from '../openapi/api-problems';

/** The caller's account as a whole: erasing it on their request. */
@ApiTags('account')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@Controller('me')
export class AccountController {
  constructor(private readonly erasure: ErasureRequests) {}

  @Delete()
  @HttpCode(204)
  @ApiOperation({
    summary: "Erase the caller's account: every conversation, book and upload, and their Redis keys",
    description:
      'Done when it answers (docs/erasure.md); the usage ledger keeps the money spent without the reader. ' +
      'Other readers are untouched. The same token can go on: it then has an empty account.',
  })
  @ApiNoContentResponse({ description: 'erased' })
  async erase(@CurrentUser() user: AuthUser): Promise<void> {
    await this.erasure.account(user.id);
  }
}
