"""Every lead action (a service taking its actor), the admin and the lead's pages."""
