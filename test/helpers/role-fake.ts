/**
 * A unit test's fake of the store role(s) a module takes: the methods given, and any other method of the
 * role failing loudly when called, so a test names exactly what the code under test may use.
 */
export function fakeRole<T extends object>(methods: Partial<T>): T {
  return new Proxy(methods, {
    get(target, name, receiver) {
      if (name in target) return Reflect.get(target, name, receiver);
      if (typeof name === 'symbol' || name === 'then') return undefined; // not a thenable
      return () => {
        throw new Error(`the fake store has no ${name}: the code under test uses more than the test gave it`);
      };
    },
  }) as T;
}
