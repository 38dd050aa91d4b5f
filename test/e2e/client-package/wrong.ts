/** Must not compile: the installed types know the API (a path that does not exist, a body missing its content). */
import { createParleyClient } from '@parley/client';

const parley = createParleyClient({ baseUrl: 'http://127.0.0.1:1' });
await parley.GET('/v1/no-such-path');
await parley.POST('/v1/conversations/{id}/messages', { params: { path: { id: 'x' } }, body: { text: 'hi' } });
