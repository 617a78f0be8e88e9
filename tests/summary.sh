summary
