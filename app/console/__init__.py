"""Who may use the console and the state every console page shares: accounts and sessions, the
access rules, ConsoleState."""
