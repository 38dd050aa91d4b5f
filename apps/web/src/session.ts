/**
 * Signing in (a pasted token, or a development token minted for a user id), kept in
 * localStorage until Sign out; a token is tried on the API before the page trusts it.
 */
import { Api, ApiError } from './api';
import { refreshBooks } from './book-list';
import { closeConversation, conversationInHash, openConversation } from './conversation';
import { refreshConversations } from './conversation-list';
import { byId } from './dom';
import { showApp, showSignIn } from './layout';
import { api, base, state } from './state';
import { errText } from './toast';

const TOKEN_KEY = 'parley:token';

export function storedToken(): string | undefined {
  return localStorage.getItem(TOKEN_KEY) ?? undefined;
}

export async function signIn(t: string): Promise<void> {
  state.token = t.trim();
  try {
    await api.books();
  } catch (e) {
    state.token = undefined;
    showSignIn(e instanceof ApiError && e.status === 401 ? 'That token is not valid or has expired.' : errText(e));
    return;
  }
  localStorage.setItem(TOKEN_KEY, state.token);
  showApp();
  byId('whoami').textContent = `signed in as ${userOf(state.token)}`;
  await Promise.all([refreshBooks(), refreshConversations()]);
  const fromHash = conversationInHash();
  if (fromHash) await openConversation(fromHash);
  else (byId('new-conversation') as HTMLButtonElement).focus();
}

/** The token's subject, read without checking the signature (the API checks it). */
function userOf(t: string): string {
  try {
    return JSON.parse(atob(t.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))).sub ?? 'someone';
  } catch {
    return 'someone';
  }
}

function signOut(): void {
  closeConversation();
  localStorage.removeItem(TOKEN_KEY);
  state.token = undefined;
  history.replaceState(null, '', location.pathname);
  showSignIn();
}

export function wireSession(): void {
  byId('token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    void signIn((byId('token-input') as HTMLTextAreaElement).value);
  });
  byId('dev-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const userId = (byId('dev-user') as HTMLInputElement).value.trim();
    Api.devToken(base, userId).then(
      (t) => signIn(t),
      (err: unknown) => (byId('signin-error').textContent = errText(err)),
    );
  });
  byId('sign-out').addEventListener('click', signOut);
}
