/**
 * Signing in and out of the console. The session cookie `ps_console` is HttpOnly,
 * SameSite=Strict, Path=/console, and Secure when the request came over HTTPS. Repeated wrong
 * passwords for a name or from an address are refused unchecked for a while (./throttle.ts).
 * Every sign-in, failure, refusal and sign-out is written to the audit log.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { acceptInvitation, audit, checkPassword, endSession, invitationUser, SESSION_HOURS, startSession, type ConsoleUser } from '../access/console-users.js';
import type { Store } from '../store/store.js';
import { html, layout } from './html.js';
import { CONSOLE_ROUTE, cookieOf, SESSION_COOKIE, type ConsoleRequests, type Form, type Query } from './request.js';
import { FAILED, REFUSED, signInWait, triedName } from './throttle.js';

export function sessionRoutes(app: FastifyInstance, store: Store, { send, signedIn, notice }: ConsoleRequests): void {
  app.get('/console/login', CONSOLE_ROUTE, async (request, reply) => {
    const next = (request.query as Query).next ?? '/console/partners';
    return send(reply, layout('Sign in', undefined, html`<form class="login" method="post" action="/console/login">
      <input type="hidden" name="next" value="${next}">
      <label for="name">User name</label><input id="name" name="name" autocomplete="username" required>
      <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
      <p><button type="submit" class="primary">Sign in</button></p></form>`, { notice: notice(request) }));
  });

  app.post('/console/login', CONSOLE_ROUTE, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const name = triedName(form.name ?? '');
    // Too many recent failures for this name or from this address: refused unchecked (./throttle.ts).
    const wait = await signInWait(store, name, request.ip);
    if (wait > 0) {
      await audit(store, name, REFUSED, request.ip, `locked out for ${wait} s after repeated wrong passwords`);
      return send(reply.header('retry-after', String(wait)), layout('Sign in', undefined, html`<p class="error" role="alert">Too many wrong passwords. Try again in ${Math.ceil(wait / 60)} minute(s).</p>`), 429);
    }
    const user = await checkPassword(store, name, form.password ?? '');
    if (!user) {
      await audit(store, name, FAILED, request.ip, '');
      return send(reply, layout('Sign in', undefined, html`<p class="error" role="alert">Wrong user name or password.</p><form class="login" method="post" action="/console/login">
        <label for="name">User name</label><input id="name" name="name" value="${form.name ?? ''}" required>
        <label for="password">Password</label><input id="password" name="password" type="password" required>
        <p><button type="submit" class="primary">Sign in</button></p></form>`), 401);
    }
    await audit(store, user.name, 'sign in', request.ip, `role ${user.role}`);
    return signIn(reply, request.protocol === 'https', user, form.next);
  });

  /** A session for the user: the cookie, then the page asked for (an affiliate: its own pages only). */
  const signIn = async (reply: FastifyReply, https: boolean, user: ConsoleUser, asked: string | undefined) => {
    const session = await startSession(store, user);
    const secure = https ? '; Secure' : '';
    // Max-Age as well as Expires: a browser counts Max-Age from its own clock (RFC 6265 5.3 gives it
    // precedence), so a client whose clock differs from the server's still gets the whole session.
    reply.header('set-cookie', `${SESSION_COOKIE}=${session.id}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${SESSION_HOURS * 3600}; Expires=${session.expires.toUTCString()}${secure}`);
    const home = user.role === 'affiliate' ? '/console/affiliate' : '/console/partners';
    let next = asked && asked.startsWith('/console/') && !asked.startsWith('/console//') ? asked : home;
    if (user.role === 'affiliate' && !next.startsWith('/console/affiliate')) next = home;
    return reply.redirect(next, 303);
  };

  const inviteForm = (token: string, name: string, problem?: string) => layout('Set your password', undefined, html`${problem ? html`<p class="error" role="alert">${problem}</p>` : ''}
    <p>Welcome, ${name}. Choose a password of at least 10 characters; you sign in with it from now on.</p>
    <form class="login" method="post" action="/console/invite/${token}">
      <input type="text" name="name" value="${name}" autocomplete="username" hidden>
      <label for="password">New password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="10" required>
      <label for="confirm">The same again</label><input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength="10" required>
      <p><button type="submit" class="primary">Set password and sign in</button></p></form>`);

  app.get('/console/invite/:token', CONSOLE_ROUTE, async (request, reply) => {
    const { token } = request.params as { token: string };
    const found = await invitationUser(store, token);
    if ('problem' in found) return send(reply, layout('Invitation', undefined, html`<p class="error" role="alert">${found.problem}</p><p><a href="/console/login">Sign in</a></p>`), 410);
    return send(reply.header('referrer-policy', 'no-referrer'), inviteForm(token, found.user));
  });

  app.post('/console/invite/:token', CONSOLE_ROUTE, async (request, reply) => {
    const { token } = request.params as { token: string };
    const form = (request.body ?? {}) as Form;
    const found = await invitationUser(store, token);
    if ('problem' in found) return send(reply, layout('Invitation', undefined, html`<p class="error" role="alert">${found.problem}</p><p><a href="/console/login">Sign in</a></p>`), 410);
    if ((form.password ?? '') !== (form.confirm ?? '')) return send(reply, inviteForm(token, found.user, 'The two passwords differ.'), 400);
    const accepted = await acceptInvitation(store, token, form.password ?? '');
    if ('problem' in accepted) return send(reply, inviteForm(token, found.user, accepted.problem), 400);
    await audit(store, accepted.user.name, 'invitation accepted', request.ip, `role ${accepted.user.role}`);
    return signIn(reply, request.protocol === 'https', accepted.user, undefined);
  });

  app.post('/console/logout', CONSOLE_ROUTE, async (request, reply) => {
    const session = await signedIn(request, reply, 'any');
    if (!session) return reply;
    await endSession(store, cookieOf(request, SESSION_COOKIE) ?? '');
    await audit(store, session.user.name, 'sign out', request.ip, '');
    reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0`);
    return reply.redirect('/console/login', 303);
  });
}
