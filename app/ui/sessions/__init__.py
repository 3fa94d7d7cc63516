"""The Sessions screen: the record of past sessions, their review and progress."""
