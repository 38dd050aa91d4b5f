/**
 * The web chat page: sign in, books (upload with progress, ingest progress), conversations,
 * the chat streamed over SSE, tool calls waiting for approval, citations and their passages, the
 * spoiler guard, rename, delete, fork, and the timeline (the conversation at any earlier
 * version). This file only starts it: each concern has its module, and state.ts holds what they
 * share.
 */
import { wireUpload } from './book-upload';
import { wireComposer } from './composer';
import { wireConversation } from './conversation';
import { wireConversationList } from './conversation-list';
import { showSignIn, wireLayout } from './layout';
import { wirePassage } from './passage';
import { signIn, storedToken, wireSession } from './session';
import { wireSettings } from './settings';
import { state } from './state';
import { wireTimeline } from './timeline';

state.token = storedToken();
wireSession();
wireLayout();
wireUpload();
wireConversationList();
wireConversation();
wireComposer();
wireSettings();
wireTimeline();
wirePassage();
if (state.token) void signIn(state.token);
else showSignIn();
