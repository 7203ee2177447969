// A small tool-calling voice agent on the official @jambonz/sdk: an OpenAI realtime
// (s2s) conversation whose model can look up the weather and an order, answered over
// the same WebSocket. Test it without a phone or an LLM bill (switchboard test starts
// it, runs the scenarios against it and stops it):
//
//   npm install && switchboard test scenarios
'use strict';

const http = require('http');
const {createEndpoint} = require('@jambonz/sdk/websocket');

const port = Number(process.env.PORT || 3000);
const server = http.createServer();
const makeService = createEndpoint({server});
const svc = makeService({path: '/agent'});

// The tools the model may call, and what they return.
const tools = {
  get_weather: ({city}) => `It is sunny and 21 degrees in ${city}.`,
  lookup_order: ({order_id}) => (order_id === 'A-100' ? 'Order A-100 shipped yesterday.' : `No order ${order_id}.`),
};

svc.on('session:new', (session) => {
  const apiKey = session.data.env_vars?.OPENAI_API_KEY;
  session
    .on('/tool', (evt) => {
      const {name, args, tool_call_id} = evt;
      const run = tools[name];
      const output = run ? run(args || {}) : `Unknown tool ${name}.`;
      // jambonz 0.9.8 passes a tool output on to OpenAI only in its realtime API's
      // own shape: a conversation.item.create carrying a function_call_output.
      session.sendToolOutput(tool_call_id, {
        type: 'conversation.item.create',
        item: {type: 'function_call_output', call_id: tool_call_id, output},
      });
    })
    .on('/done', (evt) => {
      if (evt.completion_reason !== 'normal conversation end') {
        session.say({text: 'Sorry, something went wrong. Please call again.'});
      }
      session.hangup().reply();
    });

  session
    .s2s({
      vendor: 'openai',
      model: 'gpt-4o-realtime-preview',
      auth: {apiKey},
      llmOptions: {
        response_create: {modalities: ['text', 'audio'], voice: 'alloy',
          instructions: 'You are a helpful store assistant. Greet the caller and help them.'},
        session_update: {
          tools: [
            {type: 'function', name: 'get_weather', description: 'The weather in a city',
              parameters: {type: 'object', properties: {city: {type: 'string'}}, required: ['city']}},
            {type: 'function', name: 'lookup_order', description: 'The status of an order',
              parameters: {type: 'object', properties: {order_id: {type: 'string'}}, required: ['order_id']}},
          ],
        },
      },
      toolHook: '/tool',
      actionHook: '/done',
    })
    .send();
});

// The app listens itself (the SDK would, given a port, but not port 0, which lets
// the system pick one), and prints the port it got.
server.listen(port, () => console.log(JSON.stringify({event: 'ready', port: server.address().port})));
process.on('SIGTERM', () => process.exit(0));
