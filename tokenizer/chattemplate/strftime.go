package chattemplate

import (
	"fmt"
	"strings"
	"time"
)

// strftime formats t as Python's time.strftime does on Linux (glibc) for the directives
// chat templates use: %a %A %b %B %c %d %e %H %I %j %m %M %p %S %U %w %W %x %X %y %Y %z %Z
// %%, and glibc's %-d style (no padding). Another directive is an error naming it.
func strftime(format string, t time.Time) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(format) {
			return "", fmt.Errorf("strftime_now: format %q ends with a lone %%", format)
		}
		i++
		pad := true
		if format[i] == '-' && i+1 < len(format) {
			pad = false
			i++
		}
		num := func(v, width int) string {
			if !pad {
				return fmt.Sprint(v)
			}
			return fmt.Sprintf("%0*d", width, v)
		}
		switch d := format[i]; d {
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b', 'h':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'c':
			b.WriteString(t.Format("Mon Jan _2 15:04:05 2006"))
		case 'd':
			b.WriteString(num(t.Day(), 2))
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'H':
			b.WriteString(num(t.Hour(), 2))
		case 'I':
			b.WriteString(num((t.Hour()+11)%12+1, 2))
		case 'j':
			b.WriteString(num(t.YearDay(), 3))
		case 'm':
			b.WriteString(num(int(t.Month()), 2))
		case 'M':
			b.WriteString(num(t.Minute(), 2))
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'S':
			b.WriteString(num(t.Second(), 2))
		case 'U': // week of the year, Sunday first
			b.WriteString(num((t.YearDay()+6-int(t.Weekday()))/7, 2))
		case 'W': // week of the year, Monday first
			b.WriteString(num((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2))
		case 'w':
			b.WriteString(fmt.Sprint(int(t.Weekday())))
		case 'x':
			b.WriteString(t.Format("01/02/06"))
		case 'X':
			b.WriteString(t.Format("15:04:05"))
		case 'y':
			b.WriteString(num(t.Year()%100, 2))
		case 'Y':
			b.WriteString(fmt.Sprint(t.Year()))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case '%':
			b.WriteByte('%')
		default:
			return "", fmt.Errorf("strftime_now: format %q uses %%%c, which kvref does not implement", format, d)
		}
	}
	return b.String(), nil
}
