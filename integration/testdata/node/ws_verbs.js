// One path per verb whose hooks Switchboard plays from the scenario's far end, on
// @jambonz/node-client-ws: every hook the app gets is printed as a JSON line
// ({"event":"hook","hook":"/x",...data}) and answered as the path says.
'use strict';

const {createServer} = require('http');
const {createEndpoint} = require('@jambonz/node-client-ws');
const {log, listen, quiet} = require('./lib');

const server = createServer();
const makeService = createEndpoint({server, logger: quiet});

// service registers path with the verbs of session:new and the hook handlers:
// handlers[hook](session, data) answers; a hook without one is acked empty.
const service = (path, first, handlers = {}) => {
  const svc = makeService({path});
  svc.on('session:new', (session) => {
    log('session:new', {call_sid: session.call_sid});
    const seen = (hook) => (data) => {
      // A hook's own "event" (conference, bots) is printed as data_event.
      const {event, ...rest} = data;
      log('hook', {...rest, hook, data_event: event});
      (handlers[hook] || ((s) => s.reply()))(session, data);
    };
    for (const hook of ['/action', '/confirm', '/dtmf', '/amd', '/refer', '/status', '/enter', '/wait',
      '/transcript', '/event', '/bargein']) {
      session.on(hook, seen(hook));
    }
    session
      .on('call:status', (evt) => log('call:status', {call_sid: evt.call_sid, call_status: evt.call_status,
        parent_call_sid: evt.parent_call_sid, direction: evt.direction}))
      .on('tts:streaming-event', (evt) => log('tts:streaming-event', evt))
      .on('close', (code) => log('close', {code}));
    first(session).send();
  });
};

const hangup = (s) => s.hangup().reply();

service('/dial', (s) => s.dial({
  target: [{type: 'phone', number: '+15550002222'}],
  confirmHook: '/confirm', dtmfHook: '/dtmf', dtmfCapture: ['*2'], referHook: '/refer',
  amd: {actionHook: '/amd'}, actionHook: '/action',
}), {
  '/confirm': (s) => s.gather({input: ['digits'], numDigits: 1, actionHook: '/action',
    say: {text: 'Press 1 to accept the call.'}}).reply(),
  '/action': (s, d) => (d.dial_call_status ? hangup(s) : s.reply()),
});

// A call screened by the callee, who declines it: the confirm hook's verbs hang up.
service('/screen', (s) => s.dial({
  target: [{type: 'phone', number: '+15550002222'}], confirmHook: '/confirm', actionHook: '/action',
}), {
  '/confirm': (s) => s.say({text: 'You have a call. Goodbye.'}).hangup().reply(),
  '/action': (s, d) => (d.dial_call_status ? hangup(s) : s.reply()),
});

service('/conference', (s) => s.conference({
  name: 'sales', statusHook: '/status', statusEvents: ['start', 'join', 'start-talking', 'leave', 'end'],
  enterHook: '/enter', actionHook: '/action',
}), {'/action': hangup});

service('/enqueue', (s) => s.enqueue({name: 'support', waitHook: '/wait', actionHook: '/action'}), {
  '/wait': (s) => s.say({text: 'Please hold.'}).reply(),
  '/action': hangup,
});

service('/dequeue', (s) => s.dequeue({name: 'support', timeout: 20, actionHook: '/action'}), {'/action': hangup});

service('/transcribe', (s) => s.transcribe({transcriptionHook: '/transcript',
  recognizer: {vendor: 'google', language: 'en-US'}}), {
  '/transcript': (s, d) => (d.speech.alternatives[0].transcript === 'goodbye' ?
    s.say({text: 'Bye.'}).hangup().reply() : s.reply()),
});

service('/bargein', (s) => s
  .config({bargeIn: {enable: true, actionHook: '/bargein', input: ['speech', 'digits']}})
  .say({text: 'A long message the caller will talk over. '.repeat(10)})
  .pause({length: 30}), {
  '/bargein': (s) => s.say({text: 'You interrupted me.'}).hangup().reply(),
});

// config autoStreamTts: every say streams, and a bargeIn that hears the caller
// interrupts the stream.
service('/autostream', (s) => s
  .config({autoStreamTts: true, bargeIn: {enable: true, actionHook: '/bargein', input: ['speech']}})
  .say({text: 'Welcome to the agent.'})
  .say({text: 'A long message the caller will talk over. '.repeat(5)})
  .pause({length: 30}), {
  '/bargein': (s) => s.say({text: 'You interrupted me.'}).hangup().reply(),
});

for (const bot of ['dialogflow', 'lex', 'rasa']) {
  const verbs = {
    dialogflow: {project: 'p', lang: 'en-US', credentials: '{}'},
    lex: {botId: 'b', botAlias: 'a', region: 'us-east-1', credentials: {accessKey: 'k', secretAccessKey: 's'}},
    rasa: {url: 'http://127.0.0.1:1/webhooks/rest/webhook'},
  };
  service(`/${bot}`, (s) => s[bot]({...verbs[bot], eventHook: '/event', actionHook: '/action'}), {'/action': hangup});
}

listen(server);
