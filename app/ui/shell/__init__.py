"""The app around the screens: the page, navigation, the web server, printouts, the privacy sheet."""
