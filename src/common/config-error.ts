// The error of a configuration that cannot be used (a config file, an environment variable, a key): one line that
// says which setting and why. Low in the layers, so the codec and the runtime config both throw it.

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}
