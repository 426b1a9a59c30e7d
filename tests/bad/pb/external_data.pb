Bextj
location/etc/passwdp