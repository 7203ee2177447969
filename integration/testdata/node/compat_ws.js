// One WebSocket app, on either official WebSocket SDK (SDK=sdk: @jambonz/sdk 0.10,
// else @jambonz/node-client-ws), whose paths each exercise a jambonz behaviour the
// compatibility table lists (docs/compatibility.md). The test runs a simulated call
// against a path and checks the timeline and what the app printed.
'use strict';

const {createServer} = require('http');
const {log, listen, quiet} = require('./lib');

const useSDK = process.env.SDK === 'sdk';
const {createEndpoint} = require(useSDK ? '@jambonz/sdk' : '@jambonz/node-client-ws');

const server = createServer();
const makeService = createEndpoint({server, logger: quiet});

// verbs queues raw verbs on a session, whichever SDK made it.
const verbs = (session, list) => {
  if (typeof session.addVerbs === 'function') return session.addVerbs(list);
  for (const {verb, ...rest} of list) session.addVerb(verb, rest);
  return session;
};
const sid = (session) => session.callSid || session.call_sid;
const data = (session) => session.data || {};

// Each route: what the app does with a new session (or a session:redirect).
const routes = {
  // session:new acked without verbs: jambonz rejects the call (480, 1001).
  '/empty-ack': (session) => session.send(),
  // The call hook's context: the INVITE's headers, the defaults, the provider.
  '/context': (session) => {
    const d = data(session);
    log('context', {
      customer: d.sip?.headers?.['x-customer-id'], synthesizer: d.defaults?.synthesizer?.vendor,
      provider: d.service_provider_sid, local: d.local_sip_address, caller_id: d.caller_id,
    });
    verbs(session, [{verb: 'hangup'}]).send();
  },
  // gather's rules: finishOnKey not among the digits; verb_id on the action hook.
  '/gather': (session) => {
    session.on('/digits', (evt) => {
      log('hook', {digits: evt.digits, reason: evt.reason, verb_id: evt.verb_id});
      verbs(session, [{verb: 'hangup'}]).reply();
    });
    verbs(session, [{verb: 'gather', id: 'menu', input: ['digits'], finishOnKey: '#', actionHook: '/digits', timeout: 10}]).send();
  },
  // verb:status starting/finished name the verb (name, not verb).
  '/verb-status': (session) => {
    session.on('verb:status', (evt) => log('verb:status', {name: evt.name, verb: evt.verb, status_event: evt.event}));
    verbs(session, [{verb: 'config', notifyEvents: true}, {verb: 'say', text: 'hi'}, {verb: 'pause', length: 1}, {verb: 'hangup'}]).send();
  },
  // Commands jambonz ignores: tag, an unknown one; stream:status is known.
  '/commands': (session) => {
    session.on('jambonz:error', (evt) => log('jambonz:error', {evt}));
    session.on('/next', (evt) => {
      log('commands-hook', {customerData: evt.customerData || null});
      verbs(session, [{verb: 'hangup'}]).reply();
    });
    verbs(session, [{verb: 'gather', input: ['digits'], numDigits: 1, actionHook: '/next', timeout: 2}]).send();
    session.sendCommand('tag', {crm: '77'});
    session.sendCommand('launch:rocket', {now: true});
    session.sendCommand('stream:status', {stream_status: 'pause'});
  },
  // A command before the ack of session:new is lost.
  '/early-command': (session) => {
    session.sendCommand('redirect', [{verb: 'say', text: 'lost'}, {verb: 'hangup'}]);
    verbs(session, [{verb: 'say', text: 'kept'}, {verb: 'hangup'}]).send();
  },
  // alert raises an application alert; sip:decline fails the call with its status.
  '/alert-decline': (session) => {
    session.on('call:status', (evt) => log('call:status', {call_status: evt.call_status, sip_status: evt.sip_status, sip_reason: evt.sip_reason}));
    verbs(session, [{verb: 'alert', message: 'closed today'}, {verb: 'sip:decline', status: 486, reason: 'Busy Now'}]).send();
  },
  // A redirect verb to another WebSocket app: a new socket, session:redirect first.
  '/first': (session) => {
    verbs(session, [{verb: 'say', text: 'moving'}, {verb: 'redirect', actionHook: `ws://127.0.0.1:${server.address().port}/second`}]).send();
  },
  '/second': (session, type) => {
    log('second', {type, call_sid: sid(session) || null});
    verbs(session, [{verb: 'say', text: 'second app'}, {verb: 'hangup'}]).send();
  },
};

for (const [path, handle] of Object.entries(routes)) {
  const svc = makeService({path});
  svc.on('session:new', (session) => {
    log('session:new', {path, call_sid: sid(session)});
    session.on('close', (code) => log('close', {path, code}));
    handle(session, 'session:new');
  });
  svc.on('session:redirect', (session) => {
    log('session:redirect', {path, call_sid: sid(session) || null});
    session.on('close', (code) => log('close', {path, code}));
    handle(session, 'session:redirect');
  });
}

listen(server);
