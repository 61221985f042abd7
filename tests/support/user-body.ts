/** A Create User body for tests and the benchmark seed (no test runner imported: scripts use it too). */

/** A valid Create User body; `overrides` replace top-level fields, `individual` merges. */
export function userBody(overrides: Record<string, unknown> = {}, individual: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    account_type: "individual",
    account_role: "third",
    account_purpose: "trading",
    first_name: "Jane",
    last_name: "Doe",
    email: `jane.${Math.random().toString(36).slice(2, 10)}@example.com`,
    phone_country_code: "US",
    phone_number: `20255${String(Math.floor(Math.random() * 1e5)).padStart(5, "0")}`,
    individual: {
      dob: "1990-05-17",
      residential_country_code: "US",
      residential_address: "742 Evergreen Terrace",
      residential_city: "Springfield",
      residential_state: "IL",
      residential_postal_code: "62704",
      id_type: "ssn",
      id_number: "123-45-6789",
      id_country_code: "US",
      ...individual,
    },
    ...overrides,
  };
}
