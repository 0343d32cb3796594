import { ConversionError, defineConversionWebhook, hubAndSpoke, withoutFields } from 'kube-lambda-webhooks';

/** The message of the reference document for a hostPort that does not split. */
export const BAD_HOST_PORT = 'hostPort could not be parsed into a separate host and port';

/**
 * Conversion webhook for `crontabs.example.com`: v1beta1 keeps `hostPort` ("host:port"),
 * v1 (the hub) keeps `host` and `port`. Every other field is carried over as it is.
 */
export const webhook = defineConversionWebhook({
  name: 'crontab-conversion',
  crd: 'crontabs.example.com',
  crdManifest: 'functions/crontab-conversion/crd.yaml',
  convert: hubAndSpoke({
    hub: 'v1',
    spokes: {
      v1beta1: {
        toHub: (crontab) => {
          const { hostPort } = crontab;
          const out = withoutFields(crontab, 'hostPort');
          if (hostPort === undefined) return out;
          const parts = typeof hostPort === 'string' ? hostPort.split(':') : [];
          if (parts.length !== 2) throw new ConversionError(BAD_HOST_PORT);
          out.host = parts[0];
          out.port = parts[1];
          return out;
        },
        fromHub: (crontab) => {
          const { host, port } = crontab;
          const out = withoutFields(crontab, 'host', 'port');
          if (host !== undefined || port !== undefined) out.hostPort = `${host ?? ''}:${port ?? ''}`;
          return out;
        },
      },
    },
  }),
});

/** The Lambda handler. */
export const handler = webhook.handler;
export default webhook;
